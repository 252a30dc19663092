print("vaultsync-notify: not yet wired")
