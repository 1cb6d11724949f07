"""`python -m looma_git` runs the CLI."""

from looma_git.cli.main import main

main()
