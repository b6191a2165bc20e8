"""A2UI Chat agent package."""
