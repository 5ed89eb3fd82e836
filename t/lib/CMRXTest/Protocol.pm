package CMRXTest::Protocol;

# Test helper: memcached text-protocol items and socket pairs to feed a
# parser, and an on_item that finishes values as Cache::Memcached does.
# See the POD at the end of the file.

use strict;
use warnings;

use Compress::Zlib ();
use Exporter 'import';
use Fcntl  qw(F_GETFL F_SETFL O_NONBLOCK);
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(value_item nonblocking pair finalizer);

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

# Cache::Memcached's finalize, reduced, as an on_item: chops each value's
# CRLF and notes its flags in %$seen; with gunzip => 1 it gunzips a value
# flagged 2 with Compress::Zlib too, as that finalize does.
sub finalizer {
    my ($dest, $seen, %opt) = @_;
    return sub {
        my ($batch) = @_;
        while (my ($key, $flags) = each %$batch) {
            chop $dest->{$key}; chop $dest->{$key};
            $dest->{$key} = Compress::Zlib::memGunzip($dest->{$key}) if $opt{gunzip} && $flags & 2;
            $seen->{$key} = $flags;
        }
    };
}

1;

__END__

=head1 NAME

CMRXTest::Protocol - memcached response items and socket pairs for parser tests

=head1 SYNOPSIS

    use CMRXTest::Protocol qw(value_item nonblocking pair finalizer);

    my $resp = value_item('ns:a', 0, 'abc') . value_item('b', 2, $gz, 123)
             . "END\r\n";
    my ($r, $w) = pair();                          # reader non-blocking
    my ($r2, $w2) = pair(nonblocking_writer => 1); # both non-blocking
    syswrite $w, $resp;
    my (%dest, %flags);
    my $parser = Cache::Memcached::RustXS::GetParser->new(\%dest, 0,
        finalizer(\%dest, \%flags, gunzip => 1));
    $parser->parse_from_sock($r);

=head1 DESCRIPTION

C<value_item($key, $flags, $data [, $cas])> is C<"VALUE key flags bytes[ cas]\r\ndata\r\n">.
C<pair> makes a C<socketpair> (binmode, reader C<O_NONBLOCK>);
C<nonblocking($fh)> sets C<O_NONBLOCK> on a handle and returns it.
C<finalizer(\%dest, \%flags [, gunzip =E<gt> 1])> is an C<on_item> for a
parser storing into C<%dest>: Cache::Memcached's finalize, reduced. It
chops each finished value's CRLF and notes its flags in C<%flags>; with
C<gunzip>, a value still flagged 2 is gunzipped with
C<Compress::Zlib::memGunzip> (C<undef> when that fails), as that finalize
does.

=cut
