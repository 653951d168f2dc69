"""The DGX Spark: its facts batch (`commands`, `facts`), snapshot, render (netplan, sysctl.d,
lossless RoCE script and udev rules), diff, QoS commands, the Nornir tasks that back up, apply,
verify and restore it, and its platform data (`platform`); `device.Spark` is the contract."""
