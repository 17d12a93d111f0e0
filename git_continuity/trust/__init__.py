"""Whose state to believe: the keys this user trusts (``signers``, outside ``.git``),
signing state commits and judging their signatures (``signing``, ``signatures``, ``sshsig``
for Ed25519 in-process), who wrote each entry (``authorship``), the witness of the newest
state seen (``witness``), and the commands a person approved to run (``approvals``).

May import: ``clone``, ``repo`` and the top-level modules.
"""
