"""What runs inside a lab host: its files and mounts, sshd, lldpd, chrony, the netplan and
mlnx_qos stand-ins, and the switch's emulator process."""
