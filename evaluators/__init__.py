"""Built-in metric plugins.  Each module holds one metric; they are registered through the
``evalpipe.metrics`` entry-point group exactly as a third-party plugin would be, and imported
only when used."""
