"""The helper process: a process per user and repository that has imported what commands
need and forks a warmed copy of itself per command. ``door`` is the front door the command
line goes through (in the helper when one can take the command, else here); ``server`` the
helper itself; ``forked`` a command's copy; ``peer`` what the two must share; ``place``
where it listens, refused where git refuses.

May import: ``cli`` (its peer: the helper runs the command line) and every folder below.
"""
