package CMRXTest::Protocol;

# Test helper: memcached text-protocol items and socket pairs to feed a
# parser. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use Fcntl  qw(F_GETFL F_SETFL O_NONBLOCK);
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(value_item nonblocking pair);

# One VALUE item of the text protocol (no namespace added).
sub value_item {
    my ($key, $flags, $data, $cas) = @_;
    return "VALUE $key $flags " . length($data)
         . (defined $cas ? " $cas" : '') . "\r\n$data\r\n";
}

sub nonblocking {
    my ($fh) = @_;
    fcntl($fh, F_SETFL, fcntl($fh, F_GETFL, 0) | O_NONBLOCK) or die "fcntl: $!";
    return $fh;
}

# (reader, writer) of a Unix socket pair, binary; the reader non-blocking as
# Cache::Memcached's sockets are, the writer too if asked.
sub pair {
    my (%opt) = @_;
    socketpair(my $r, my $w, AF_UNIX, SOCK_STREAM, PF_UNSPEC)
        or die "socketpair: $!";
    binmode $_ for $r, $w;
    nonblocking($r);
    nonblocking($w) if $opt{nonblocking_writer};
    return ($r, $w);
}

1;

__END__

=head1 NAME

CMRXTest::Protocol - memcached response items and socket pairs for parser tests

=head1 SYNOPSIS

    use CMRXTest::Protocol qw(value_item nonblocking pair);

    my $resp = value_item('ns:a', 0, 'abc') . value_item('b', 2, $gz, 123)
             . "END\r\n";
    my ($r, $w) = pair();                          # reader non-blocking
    my ($r2, $w2) = pair(nonblocking_writer => 1); # both non-blocking
    syswrite $w, $resp;
    $parser->parse_from_sock($r);

=head1 DESCRIPTION

C<value_item($key, $flags, $data [, $cas])> is C<"VALUE key flags bytes[ cas]\r\ndata\r\n">.
C<pair> makes a C<socketpair> (binmode, reader C<O_NONBLOCK>);
C<nonblocking($fh)> sets C<O_NONBLOCK> on a handle and returns it.

=cut
