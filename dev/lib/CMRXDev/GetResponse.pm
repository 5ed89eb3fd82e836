package CMRXDev::GetResponse;

# The one reader of memcached get responses for the tests and the
# benchmark: the values as a client gets them, read by the distribution's
# own parser, and the items as the server holds them, for the checks of
# what a client stored. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(response_values stored_items);

my $PARSER = 'Cache::Memcached::RustXS::GetParser';

# What the parser and stored_items accept (rust/parser.rs): keys of 1 to
# 250 bytes without NUL, space or LF; flags within 32 bits; lengths up to
# 1 GiB; an optional cas of at most 20 digits; lines of at most 2 KiB.
my $MAX_FLAGS    = 4_294_967_295;
my $MAX_LENGTH   = 1 << 30;
my $MAX_LINE     = 2048;
my $CRLF         = "\r\n";
my $CRLF_LENGTH  = length $CRLF;
my $VALUE_LINE   = qr/\AVALUE ([^\0\n ]{1,250}) ([0-9]+) ([0-9]+)(?: [0-9]{1,20})?\z/;

# [[key, flags, value], ...] in the order of the response, read by
# Cache::Memcached::RustXS::GetParser: compressed values come decoded, with
# bit 2 of their flags cleared, as a client gets them. Dies with the
# parser's reason on a bad or unfinished response.
sub response_values {
    my ($response) = @_;
    require Cache::Memcached::RustXS::GetParser;
    tie my %in_order, 'CMRXDev::GetResponse::InOrder';
    my %flags;
    my $on_item = sub { my ($batch) = @_; @flags{ keys %$batch } = values %$batch };
    my $parser = $PARSER->new(\%in_order, 0, $on_item);
    my $result = $parser->parse_from_string($response);
    die "not a get response: " . $parser->error . "\n" if $result < 0;
    die "a get response cut short: no END line\n" if $result == 0;
    my $values = tied(%in_order)->stored;
    die "a key twice in one get response: its flags cannot be told apart\n"
        if keys(%flags) != @$values;
    for my $value (@$values) {
        $value->[1] = $flags{ $value->[0] };
        # With an on_item of its own, every value keeps its CRLF.
        substr($value->[2], -$CRLF_LENGTH, $CRLF_LENGTH, '');
    }
    return $values;
}

# [[key, flags, bytes], ...] in the order of the response, as the server
# holds them: flags and bytes untouched (the parser decodes compressed
# values, so this reads them itself, by the same rules). Dies naming what
# is wrong on anything else.
sub stored_items {
    my ($response) = @_;
    my ($at, @items) = (0);
    while (1) {
        my $line_end = index $response, $CRLF, $at;
        my $line = substr $response, $at, ($line_end < 0 ? length($response) : $line_end) - $at;
        die "a get response line longer than $MAX_LINE bytes\n" if length($line) + $CRLF_LENGTH > $MAX_LINE;
        die "a get response cut short: no END line\n" if $line_end < 0;
        $at = $line_end + $CRLF_LENGTH;
        if ($line eq 'END') {
            die "bytes after END in a get response\n" if $at != length $response;
            return \@items;
        }
        my ($key, $flags, $length) = $line =~ $VALUE_LINE
            or die "not a get response: the line '" . substr($line, 0, 80) . "'\n";
        die "flags over 32 bits in a get response: $flags\n" if $flags > $MAX_FLAGS;
        die "a value over 1 GiB in a get response: $length bytes\n" if $length > $MAX_LENGTH;
        die "a get response cut short in the value of $key\n"
            if length($response) < $at + $length + $CRLF_LENGTH;
        die "the value of $key is not followed by CRLF in a get response\n"
            if substr($response, $at + $length, $CRLF_LENGTH) ne $CRLF;
        push @items, [ $key, $flags + 0, substr($response, $at, $length) ];
        $at += $length + $CRLF_LENGTH;
    }
}

# A destination hash that keeps each store, in order: the parser stores
# each value as it finishes it.
package CMRXDev::GetResponse::InOrder;

# [key, flags (undef: not known yet), value] of each store. (STORE runs
# once a value: it copies nothing but the value it keeps.)
sub TIEHASH { my ($class) = @_; return bless [], $class }
sub STORE   { push @{ $_[0] }, [ $_[1], undef, $_[2] ]; return }
sub FETCH   { return undef }
sub stored  { my ($self) = @_; return [@$self] }

1;

__END__

=head1 NAME

CMRXDev::GetResponse - the one reader of memcached get responses, for the tests and the benchmark

=head1 SYNOPSIS

    use lib 'dev/lib';
    use CMRXDev::GetResponse qw(response_values stored_items);

    my $response = "VALUE a 0 5\r\nhello\r\nEND\r\n";

    # As a client gets them: read by Cache::Memcached::RustXS::GetParser.
    for my $value (@{ response_values($response) }) {
        my ($key, $flags, $data) = @$value;    # ('a', 0, 'hello')
    }

    # As the server holds them: flags and bytes untouched.
    my ($item) = @{ stored_items($response) };    # ['a', 0, 'hello']

=head1 DESCRIPTION

The tests and the benchmark read memcached C<get> responses in two ways,
both here (F<t/08-helper-homes.t> checks that no other of their files
reads one):

=over 4

=item C<response_values($response)>

The values as a client gets them: C<[[key, flags, value], ...]> in the
order of the response, read by L<Cache::Memcached::RustXS::GetParser>
(C<parse_from_string>), so the distribution must be built and in C<@INC>.
A compressed value (flag 2) comes decoded, with bit 2 of its flags cleared;
a value the parser drops (a zstd frame whose dictionary is not loaded, one
over C<$Cache::Memcached::RustXS::Zlib::MaxOutput>) is left out, as a
client misses it. Dies with the parser's reason on a bad response, on one
cut short, and on a key that comes twice (its flags could not be told
apart). The corpus (L<CMRXDev::Corpus>) is read with it.

=item C<stored_items($response)>

The items as the server holds them, for the checks of what a client
stored: C<[[key, flags, bytes], ...]> in the order of the response, flags
and bytes untouched, compressed or not. The parser cannot give these (it
decodes every value flagged compressed and clears the flag), so this reads
the response itself, by the parser's rules: C<VALUE E<lt>keyE<gt>
E<lt>flagsE<gt> E<lt>bytesE<gt>[ E<lt>casE<gt>]>, a key of 1 to 250 bytes
without NUL, space or LF, flags within 32 bits, at most 1 GiB of data and
CRLF after it, lines of at most 2 KiB, C<END> and nothing after it. It
dies naming what is wrong on anything else (C<SERVER_ERROR>, an unknown
line, a response cut short, ...). F<t/00-helpers.t> checks that it accepts
and refuses what the parser does. Needs nothing built.

=back

=cut
