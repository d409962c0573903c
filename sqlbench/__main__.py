"""``python -m sqlbench``."""

from sqlbench.cli.main import main

if __name__ == "__main__":
    main()
