"""The providers' HTTP plumbing: the client, bodies, proxies, TLS and the collector pause."""
