"""``python -m chainrules check`` / ``python -m chainrules coverage NAMESPACE``."""

import sys

from chainrules._cli import main

if __name__ == "__main__":
    sys.exit(main())
