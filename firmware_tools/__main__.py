from firmware_tools.cli import main

raise SystemExit(main())
