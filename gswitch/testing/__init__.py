"""Test helpers shared by gswitch's own suite and by plugin authors: the graph zoo and datasets."""
