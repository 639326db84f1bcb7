"""Drive-time adapters: zip-centroid estimates (default) and an OSRM table-service client."""

from adapters.drivetime.osrm import OsrmDriveTime, OsrmError
from adapters.drivetime.zipcentroid import ZipCentroidDriveTime, centroids, zip_centroid

__all__ = ["OsrmDriveTime", "OsrmError", "ZipCentroidDriveTime", "centroids", "zip_centroid"]
