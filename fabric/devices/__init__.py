"""One package per device, behind one contract (`contract.Device`): `spark` (DGX Spark over
SSH), `crs804` (MikroTik CRS804-4DDQ-hRM over the RouterOS API) and `crs812` (a second switch
model on the CRS804's code). Each holds its commands, fact building, render, diff, QoS,
snapshot, backup/restore/apply/verify tasks and platform data; `registry` says which device
drives a host. Devices import the core only; push and the collection import them."""
