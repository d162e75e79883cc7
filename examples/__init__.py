"""Examples of mrsparse: a sample corpus, a corpus generator, a walk-through."""
