package CMRXBench::Server;

# The memcached the benchmark talks to: the servers in MEMCACHED_SERVERS, or
# one of our own on a free 127.0.0.1 port, stopped at exit. Uses the test
# suite's t/lib/CMRXTest/Memcached.pm when it is there, else starts it here.

use strict;
use warnings;
use IO::Socket::INET ();
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep);

my @ARGS = ('-I', '32m', '-m', '1024', '-U', '0', ($> == 0 ? ('-u', 'root') : ()));
my @running;    # objects to stop at exit

# Returns (\@addresses, $description).
sub servers {
    my ($class, $root) = @_;
    if (my $list = $ENV{MEMCACHED_SERVERS}) {
        my @addr = grep { length } split /\s*,\s*/, $list;
        return (\@addr, 'MEMCACHED_SERVERS');
    }
    if (-f "$root/t/lib/CMRXTest/Memcached.pm") {
        my @s = eval {
            local @INC = ("$root/t/lib", @INC);
            require CMRXTest::Memcached;
            my @r = CMRXTest::Memcached->start(count => 1, args => [@ARGS]);
            @r = @{ $r[0] } if @r == 1 && ref $r[0] eq 'ARRAY';
            die "no server returned\n" unless @r && eval { $r[0]->can('address') };
            @r;
        };
        if (@s) {
            push @running, @s;
            return ([map { $_->address } @s], 'own memcached (CMRXTest::Memcached)');
        }
        (my $err = $@) =~ s/\s+$//;
        warn "CMRXTest::Memcached failed ($err); starting memcached here\n";
    }
    my $s = CMRXBench::Server::Inline->start(@ARGS);
    push @running, $s;
    return ([$s->address], 'own memcached');
}

sub stop_all {
    while (my $s = pop @running) { eval { $s->stop } }
}

END { stop_all() }

package CMRXBench::Server::Inline;

use POSIX qw(WNOHANG);
use Time::HiRes ();

sub start {
    my ($class, @args) = @_;
    my $bin = _which('memcached') or die "memcached not found in PATH; set MEMCACHED_SERVERS\n";
    for my $try (1 .. 5) {
        my $probe = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1, ReuseAddr => 1)
            or die "cannot bind 127.0.0.1: $!\n";
        my $port = $probe->sockport;
        close $probe;
        my $pid = fork // die "fork: $!\n";
        if (!$pid) {
            open STDIN,  '<', '/dev/null';
            open STDOUT, '>', '/dev/null';
            open STDERR, '>', '/dev/null';
            { no warnings 'exec'; exec $bin, '-l', '127.0.0.1', '-p', $port, @args; }
            POSIX::_exit(127);
        }
        my $self = bless { pid => $pid, port => $port }, $class;
        for (1 .. 100) {
            if (waitpid($pid, WNOHANG) == $pid) { delete $self->{pid}; last }
            my $c = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port, Timeout => 1);
            return $self if $c;
            Time::HiRes::sleep(0.05);
        }
        $self->stop;
    }
    die "could not start memcached on 127.0.0.1\n";
}

sub address { "127.0.0.1:$_[0]{port}" }

sub stop {
    my $self = shift;
    my $pid = delete $self->{pid} or return;
    kill 'TERM', $pid;
    for (1 .. 50) { return if waitpid($pid, WNOHANG) == $pid; Time::HiRes::sleep(0.02) }
    kill 'KILL', $pid;
    waitpid $pid, 0;
}

sub DESTROY { $_[0]->stop }

sub _which {
    my $name = shift;
    for my $d (split /:/, ($ENV{PATH} // '') . ':/usr/bin:/usr/local/bin') { return "$d/$name" if -x "$d/$name" }
    return;
}

1;
