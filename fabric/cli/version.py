"""`fabric version`."""

import typer

from fabric import __version__


def register(app: typer.Typer) -> None:
    @app.command("version")
    def version() -> None:
        """Print the toolkit version."""
        typer.echo(__version__)
