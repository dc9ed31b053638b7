"""Who may use the grid and how it proves itself: tokens, rights and the audit trail (auth.py), the
grid's CA and certificates (tls.py). Below the master, the nodes and the interface, which all use them."""
