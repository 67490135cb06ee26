from tier2.cli import main

raise SystemExit(main())
