"""okstra-git: a git-native workflow runtime for multi-agent software work."""

__version__ = "0.1.0"
