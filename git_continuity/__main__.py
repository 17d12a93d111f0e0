from git_continuity.cli import main

raise SystemExit(main())
