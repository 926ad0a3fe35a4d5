"""Machine labelers: keyword rules now; TF-IDF, student and teacher later."""
