"""The offline stages that train and measure the question writer and the reasoner (map: helpers/agents/__init__.py)."""
