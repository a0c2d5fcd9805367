"""Probe agents in other locations, and what the builder takes from them (docs/locations.md).

batch    a run's results as one signed file, and the checks the builder makes of it
inbox    where batches meet: a folder, or any rclone remote (S3, R2, GCS...)
agent    ``statusgen probe --location NAME``: run the checks, deliver the batch, keep what
         could not be sent
ingest   the batches that arrived, verified, for the store
"""
