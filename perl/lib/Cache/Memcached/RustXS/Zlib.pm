package Cache::Memcached::RustXS::Zlib;

use strict;
use warnings;

use Carp ();
use Exporter 5.57 'import';
use Cache::Memcached::RustXS ();

our $VERSION = $Cache::Memcached::RustXS::VERSION;

our @EXPORT_OK = qw(memGzip memGunzip compress uncompress compress_methods
                    override_compress_zlib restore_compress_zlib);
our %EXPORT_TAGS = (all => \@EXPORT_OK);

# Tunables, read at each call (so `local` works).
our $Level     = 6;          # memGzip's libdeflate level
our $MaxOutput = 64 << 20;   # largest output memGunzip/uncompress will make

# Compress::Zlib's error variable, shared: reading either name gives the same.
our $gzerrno;
*gzerrno = \$Compress::Zlib::gzerrno;

sub compress_methods {
    my %opt = @_;
    my $level = exists $opt{level} ? $opt{level} : $Level;
    my $max   = exists $opt{max_output} ? $opt{max_output} : $MaxOutput;
    Carp::croak("compress_methods: unknown option(s): " . join(', ', sort grep { !/^(?:level|max_output)$/ } keys %opt))
        if grep { !/^(?:level|max_output)$/ } keys %opt;
    return _compress_methods($level, $max);
}

my %original;    # Compress::Zlib's own functions while overridden
my @OVERRIDDEN = qw(memGzip memGunzip compress uncompress);

sub override_compress_zlib {
    require Compress::Zlib;
    return 1 if %original;
    no strict 'refs';
    no warnings 'redefine';
    for my $name (@OVERRIDDEN) {
        $original{$name} = \&{"Compress::Zlib::$name"};
        *{"Compress::Zlib::$name"} = \&{__PACKAGE__ . "::$name"};
    }
    return 1;
}

sub restore_compress_zlib {
    return 1 unless %original;
    no strict 'refs';
    no warnings 'redefine';
    *{"Compress::Zlib::$_"} = delete $original{$_} for @OVERRIDDEN;
    return 1;
}

sub compress_zlib_overridden { return %original ? 1 : 0 }

1;
