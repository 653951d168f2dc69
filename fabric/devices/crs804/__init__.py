"""The MikroTik CRS804-4DDQ-hRM over the RouterOS API: its facts (`facts`, `read_switch_qos`),
snapshot, render (lanes, RouterOS script), diff, QoS calls, the Nornir tasks that back up,
apply, poll and restore it, and its platform data (`platform`); `device.Crs804` is the
contract."""
