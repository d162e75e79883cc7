"""``python -m mrjobs.plan``: the cost planner's command line."""
from mrjobs.plan import main

if __name__ == "__main__":
    main()
