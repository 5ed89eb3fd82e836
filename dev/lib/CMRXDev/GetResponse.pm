package CMRXDev::GetResponse;

# The one reader of memcached get responses for the tests and the
# benchmark, over the distribution's own parser: the values as a client
# gets them, and the items as the server holds them, for the checks of
# what a client stored. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(response_values stored_items);

my $PARSER = 'Cache::Memcached::RustXS::GetParser';
my $CRLF_LENGTH = length "\r\n";

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
# holds them: flags and bytes untouched, read by the parser's
# get_response_items. Dies with the parser's reason on a bad or unfinished
# response.
sub stored_items {
    require Cache::Memcached::RustXS::GetParser;
    my ($items, $complete) = Cache::Memcached::RustXS::GetParser::get_response_items($_[0]);
    die "a get response cut short: no END line\n" unless $complete;
    $#$_ = 2 for @$items;    # [key, flags, data, cas] -> [key, flags, data], in place
    return $items;
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
both here and both through L<Cache::Memcached::RustXS::GetParser>, so the
distribution must be built and in C<@INC> (C<prove -b>, C<perl -Mblib>;
loading this module needs nothing built). F<t/08-helper-homes.t> checks
that no other of their files reads one.

=over 4

=item C<response_values($response)>

The values as a client gets them: C<[[key, flags, value], ...]> in the
order of the response, read by a parser object (C<parse_from_string>), as
Cache::Memcached reads them. A compressed value (flag 2) comes decoded,
with bit 2 of its flags cleared; a value the parser drops (a zstd frame
whose dictionary is not loaded, one over
C<$Cache::Memcached::RustXS::Zlib::MaxOutput>) is left out, as a client
misses it. Dies with the parser's reason on a bad response, on one cut
short, and on a key that comes twice (its flags could not be told apart).

=item C<stored_items($response)>

The items as the server holds them, for the checks of what a client
stored and for the corpus (L<CMRXDev::Corpus>): C<[[key, flags, bytes],
...]> in the order of the response, flags and bytes untouched, compressed
or not, nothing dropped. Read by the parser's C<get_response_items>, the
same engine by the same rules; dies with its reason (C<not a memcached get
response: ...>) on a bad response, and on one cut short (no C<END>).
F<t/00-helpers.t> checks that it accepts and refuses what a parser object
does.

=back

=cut
