"""Document text and the layout's rules: blocks, diffs, merges, globs and load rules, and which
files are a project's memory documents. Pure: nothing here writes a file."""
