from git_continuity.cli.main import main

raise SystemExit(main())
