"""The commands' use cases, between `cli/` (parsing) and the library (runner, store, discovery).

One small module per command: each function takes plain arguments, does the work (discovers,
plans, runs, opens the store, writes files) and returns data (the records of `reports/data.py`);
`reports/` turns that data into output. Nothing here prints or imports rich; nothing imports `cli`.

- `project.load_project`, `project.store_path`  the project and store a command works on
- `run.build_request`, `run.execute`            `niceeval run` (returns a `RunReport`)
- `dry.plan_run`                                `niceeval run --dry` (returns the planned slots)
- `listing.list_project`                        `niceeval list` (returns a `ProjectListing`)
- `init.init_project`                           `niceeval init` (returns an `InitReport`)
- `view.load_view`                              `niceeval view` (returns a `RunPage` or `AttemptDetail`)
- `query.query_rows`                            `niceeval query` (gives `QueryRows`, read while open)
"""
