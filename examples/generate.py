"""The corpus generator is :mod:`mrjobs.generate` (``python -m mrjobs.generate``),
installed with mrsparse so that it runs from any directory; this module keeps
the old name working from the repository's root."""
from mrjobs.generate import generate_arrays, generate_lines, main, write_corpus

__all__ = ["generate_arrays", "generate_lines", "main", "write_corpus"]

if __name__ == "__main__":
    main()
