"""Input: paths and standard input to positioned resources.

``discover`` finds the files, ``parse`` reads each with libyaml into plain data and positions,
``load`` builds ``Resource`` objects, ``roots`` splits the input into sets linted apart,
``units`` and ``cache``/``keys``/``encode`` keep what each file gave for the next run, and
``workers`` spreads large inputs over processes. Nothing here knows a rule.
"""
