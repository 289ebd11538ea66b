"""Source files: finding them, reading them, writing them back without losing anything.

- ``source.py``: the one source type, ``Source``: a file's text (the Python program the
  engine migrates) and what is needed to write it back the same way; its methods map a
  migrated program back to the file;
- ``reading.py``: ``read_source``, a path to a ``Source``; a ``.py`` file is decoded here
  (a BOM or a PEP 263 coding cookie honoured, newlines kept), a notebook read by
- ``notebooks.py``: ``Notebook``, the ``Source`` of a ``.ipynb`` file, whose text is its
  code cells as one program and whose cells are written back into the JSON text as read;
- ``writing.py``: atomic writes (a temporary file in the same folder, then
  ``os.replace``), over the file or into ``-o DIR``, keeping encoding and mode;
- ``discovery.py``: the files a run gets: folders walked honouring ``.gitignore``, the
  default excludes and the configuration's ``exclude``.
"""
