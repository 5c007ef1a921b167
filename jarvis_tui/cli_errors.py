"""The command line's own error: one line for the user, and the command exits with EXIT_USAGE.
Apart from cli.py so the commands it loads when used (cli_tools.py) can raise it too."""


class CliError(Exception):
    """One line for the user; the command exits with EXIT_USAGE."""
