"""runtime/delegates."""
