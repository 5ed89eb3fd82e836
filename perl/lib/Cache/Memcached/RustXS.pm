package Cache::Memcached::RustXS;

use strict;
use warnings;

require XSLoader;
XSLoader::load(__PACKAGE__);

# The version is stated once, in Cargo.toml; the linked engine reports it.
our $VERSION = engine_version();

1;
