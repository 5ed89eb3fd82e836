package CMRXTest::Fast;

# Test helper: can Cache::Memcached::Fast be used here? See the POD at the
# end of the file.

use strict;
use warnings;

use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(fast_missing);

my $missing;

# '' when Cache::Memcached::Fast loads, else why not (one line).
sub fast_missing {
    return $missing if defined $missing;
    return $missing = '' if eval { require Cache::Memcached::Fast; 1 };
    my ($err) = split /\n/, $@;
    $err =~ s/ \(\@INC contains:.*//;    # the path list says nothing here
    return $missing = $err =~ /\ACan't locate Cache\/Memcached\/Fast\.pm/
        ? 'Cache::Memcached::Fast is not installed (0.28 needs perl 5.12)'
        : "Cache::Memcached::Fast does not load: $err";
}

1;

__END__

=head1 NAME

CMRXTest::Fast - whether Cache::Memcached::Fast is available to the tests

=head1 SYNOPSIS

    use CMRXTest::Fast qw(fast_missing);
    SKIP: {
        skip fast_missing(), 3 if fast_missing();
        my $fast = Cache::Memcached::Fast->new({ ... });
        ...
    }

=head1 DESCRIPTION

C<fast_missing> loads L<Cache::Memcached::Fast> once and returns the empty
string when that worked, or a one-line reason to skip with when it did not
(Cache::Memcached::Fast 0.28 needs perl 5.12, so on perl 5.10.1 its cases
skip while everything else in the file runs).

=cut
