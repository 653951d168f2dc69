"""The lab's lifecycle: build, record, inspect and remove a lab (namespaces, cables, management)."""
