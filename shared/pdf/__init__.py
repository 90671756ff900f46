"""Source PDFs as the services open them: a worker's cache of a job's file, and damaged pages."""
