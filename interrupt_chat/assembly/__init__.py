"""The top of the library: ``ChatState`` and ``InterruptState`` assembled from the feature mixins.

Also the registry that makes one concrete state class per chat.
"""
