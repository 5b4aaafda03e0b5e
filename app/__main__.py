from app.cli import main

if __name__ == "__main__":  # guarded: spawn-based worker processes import this module
    raise SystemExit(main())
