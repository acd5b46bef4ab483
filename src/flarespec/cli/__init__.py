import click


@click.group()
def main():
    """flarespec: validate evidence against declarative YAML specs."""
