"""A second switch model: the MikroTik CRS812-8DS-2DQ-2DDQ-RM, driven by the CRS804's code.

What is assumed (nothing here is verified on a CRS812):

- it runs the same RouterOS 7 and a switch chip of the same Marvell 98DX (Prestera) family as
  the CRS804-4DDQ-hRM, so the same API menus, QoS recipe, version gates and chip limits hold
  (platforms.yaml `crs812-8ds-2dq-2ddq-rm` repeats the CRS804's values, saying so);
- only its two 400G QSFP56-DD ports are modelled, named and split like the CRS804's
  (`qsfp56-dd-{port}-{lane}`, 8 lanes, 1x400G / 1x200G / 2x200G / 4x100G); its 2x QSFP56
  and 8x SFP56 ports are not (the model data holds one lane pattern);
- the lab's RouterOS emulator stays a CRS804: this model is covered by recorded and derived
  data (the shared contract tests), not by the emulator.
"""
