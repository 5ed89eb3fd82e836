package Cache::Memcached::RustXS::GetParser;

use strict;
use warnings;

use Cache::Memcached::RustXS ();

our $VERSION = $Cache::Memcached::RustXS::VERSION;

# new, parse_from_sock, parse_from_string and current_key are XSUBs
# (perl/RustXS.xs).

1;
