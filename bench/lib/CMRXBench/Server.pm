package CMRXBench::Server;

# The memcached the benchmark talks to: the servers in MEMCACHED_SERVERS, or
# one of our own on a free 127.0.0.1 port, stopped at exit, started by
# dev/lib's CMRXDev::Memcached (the tests' servers come from it too).

use strict;
use warnings;
use CMRXDev::Memcached ();

my @ARGS = ('-I', '32m', '-m', '1024', '-U', '0');
my @running;    # objects to stop at exit

# Returns (\@addresses, $description).
sub servers {
    my ($class) = @_;
    if (my $list = $ENV{MEMCACHED_SERVERS}) {
        my @addr = grep { length } split /\s*,\s*/, $list;
        return (\@addr, 'MEMCACHED_SERVERS');
    }
    my @s = eval { CMRXDev::Memcached->start(count => 1, args => [@ARGS]) };
    unless (@s) {
        (my $err = $@) =~ s/\s+\z//;
        die "$err (or set MEMCACHED_SERVERS to running servers)\n";
    }
    push @running, @s;
    return ([map { $_->address } @s], 'own memcached (CMRXDev::Memcached)');
}

sub stop_all {
    while (my $s = pop @running) { eval { $s->stop } }
}

END { stop_all() }

1;
