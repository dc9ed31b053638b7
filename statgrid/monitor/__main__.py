import sys

from statgrid.monitor.runner import main

sys.exit(main())
