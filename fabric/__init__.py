"""fabric: DGX Spark fabrics on a MikroTik CRS804, from cables to a model launch you can trust."""

__version__ = "0.1.0"
