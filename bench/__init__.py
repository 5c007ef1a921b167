"""The benches, by what they measure: fidelity/, recall/, cost/, local/ (the bundled model),
ui/, faults/; shared/ holds the clients more than one part drives, dev/ the developers' tools,
data/ the natural text several read. bench/README.md opens with the table of them.

A bench runs as a script from the repository root (`python bench/<part>/<name>.py`) and is
imported by the tests: so each script puts the root on sys.path first, and every bench module
imports another by its full name (`from bench.shared.cache_clients import ...`), never by a bare
one that works only from its own folder.
"""
