package Cache::Memcached::RustXS::Dict::Files;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Dict qw(fail);
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::GetParser ();

our $VERSION = '1.000';

our @EXPORT_OK = qw(read_sample_files);

# ---- files of get responses, as a source of values --------------------------------

# The values of memcached get responses read from files (VALUE key flags
# bytes, the bytes, CRLF; ... END), as a source like Dict::NodeReader: each_key
# lists them, get_multi returns them.
sub read {
    my ($class, $args) = @_;
    my (%item, @order);
    my ($files, $stdin) = (0, 0);
    for my $arg (@$args) {
        my $fh;
        if ($arg eq '-') {
            $fh = \*STDIN;
            $stdin++;
        } else {
            fail("$arg is not a file") if -e $arg && !-f _;
            open $fh, '<', $arg or fail("cannot open $arg: $!");
            $files++;
        }
        binmode $fh;
        my $name = $arg eq '-' ? 'standard input' : $arg;
        my $response = do { local $/; <$fh> };
        fail("cannot read $name: $!") unless defined $response;
        CORE::close $fh if $arg ne '-';
        my ($items, $complete) = eval { Cache::Memcached::RustXS::GetParser::get_response_items($response) };
        if (!$items) {
            my $why = Cache::Memcached::RustXS::_error_message($@);
            fail("$name: $why");
        }
        fail("$name: cut short: no END line after its " . scalar(@$items) . ' values') unless $complete;
        for my $item (@$items) {
            my ($key, $flags, $data) = @$item;
            push @order, $key unless exists $item{$key};
            $item{$key} = [ $flags, $data ];
        }
    }
    return bless { item => \%item, order => \@order, files => $files, stdin => $stdin,
                   spec => join(', ', @$args), memory => Cache::Memcached::RustXS::Dict::SlabModel->new }, $class;
}

sub spec  { $_[0]{spec} }
sub files { $_[0]{files} }
sub stdin { $_[0]{stdin} }

# Files are a sample of a cache, not the cache: they do not say how many
# keys it holds.
sub counts_keys { 0 }

# Calls $on_key->($key, $size) for every value, in the files' order, $size
# its item size in memcached's standard terms (as lru_crawler metadump
# lists it).
sub each_key {
    my ($self, $on_key) = @_;
    for my $key (@{ $self->{order} }) {
        my ($flags, $data) = @{ $self->{item}{$key} };
        $on_key->($key, $self->{memory}->item_size(length $key, length $data, $flags));
    }
    return scalar @{ $self->{order} };
}

sub get_multi {
    my ($self, $keys) = @_;
    return { map { ($_ => $self->{item}{$_}) } grep { $self->{item}{$_} } @$keys };
}

sub close { }

# ---- samples from files and standard input -------------------------------------------

sub read_sample_files {
    my ($args, %opt) = @_;
    my (@values, $files, $stdin, $empty);
    $files = $stdin = $empty = 0;
    for my $arg (@$args) {
        if ($arg eq '-') {
            binmode STDIN;
            my $all = do { local $/; <STDIN> };
            fail("reading standard input: $!") unless defined $all;
            for my $sample (split $opt{null} ? qr/\0/ : qr/\n/, $all) {
                if (length $sample) { push @values, $sample; $stdin++ }
                else                { $empty++ }
            }
            next;
        }
        fail("$arg is not a file") if -e $arg && !-f _;
        open my $fh, '<', $arg or fail("cannot open $arg: $!");
        binmode $fh;
        my $sample = do { local $/; <$fh> };
        fail("cannot read $arg: $!") unless defined $sample;
        CORE::close $fh;
        $files++;
        if (length $sample) { push @values, $sample }
        else                { $empty++ }
    }
    return { values => \@values, files => $files, stdin => $stdin, empty => $empty };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Files - cmrx-dict's values from files: get responses as a source, and plain samples

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Dict::Files qw(read_sample_files);
    use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values);

    # A file holding a memcached get response (as bench/data/values does)
    my $dump = File::Temp->new;
    print {$dump} "VALUE user:$_ 0 9\r\nvalue $_ !\r\n" for 1 .. 3;
    print {$dump} "END\r\n";
    close $dump;

    my $files   = Cache::Memcached::RustXS::Dict::Files->read(["$dump"]);
    my $listing = list_keys($files, delimiter => ':', per_prefix => 1000);
    my $values  = fetch_values($files, $listing->{groups}{user});    # ['value 1 !', ...]

    # Plain samples for a single dictionary: each file one sample
    my $sample = File::Temp->new;
    print {$sample} '{"id":1}';
    close $sample;
    my $read = read_sample_files(["$sample"]);    # { values => ['{"id":1}'], files => 1, ... }

=head1 DESCRIPTION

The second source of values of L<cmrx-dict> beside a memcached server
(L<Cache::Memcached::RustXS::Dict::NodeReader>): files. C<train --all>,
C<report --dictionaries> and C<prune> read files of memcached C<get>
responses (C<-> is standard input) through
L</"Cache::Memcached::RustXS::Dict::Files-E<gt>read(\@files)">, which gives
an object that L<Cache::Memcached::RustXS::Dict::Sample> samples as it
samples a server; a single C<train> reads plain samples, one a file (or
one a line of standard input), through L</read_sample_files(\@args, null
=E<gt> 0)>.

=head1 FUNCTIONS AND METHODS

=over 4

=item Cache::Memcached::RustXS::Dict::Files->read(\@files)

The values of the files (C<-> is standard input), each a memcached get
response: C<VALUE key flags bytes>, the bytes and CRLF, ..., C<END>, as a
C<get> returns them (and as F<bench/data/values> holds them), read by the
distribution's strict parser
(L<Cache::Memcached::RustXS::GetParser/get_response_items($response)>).
Fails, naming the file, on anything else (with the parser's reason) and on
a file cut short. A key given twice keeps its last value and its first
place.

=item each_key(sub { my ($key, $size) = @_ })

Calls the function for every value, in the files' order, with its item
size as memcached 1.6 would list it (L<Cache::Memcached::RustXS::Dict::SlabModel/item_size($key_length, $value_length, $flags)>,
with the standard settings); returns how many.

=item get_multi(\@keys)

C<< { key => [ $flags, $data ] } >> for the keys the files hold.

=item counts_keys

False: files are a sample of a cache, and say nothing of how many keys it
holds, so the tuner ranks dictionaries without their own bytes
(L<Cache::Memcached::RustXS::Dict::Tune/DESCRIPTION>).

=item spec, files, stdin, close

The files as given (joined with C<, >), how many files and standard inputs
were read, and nothing (a server's C<close>).

=item read_sample_files(\@args, null => 0)

Exported on request. Samples from files (each file one sample) and, for
C<->, from standard input: one a line, or separated by NUL bytes with
C<null>. Empty samples are skipped. Returns C<< { values => \@samples,
files, stdin, empty } >> (counts of files read, samples from standard
input, empty samples). A file that cannot be read fails.

=back

=head1 SEE ALSO

L<cmrx-dict> (its "Files of values"). The other source of values is a
live cache: L<Cache::Memcached::RustXS::Dict::NodeReader>, and
L<Cache::Memcached::RustXS::Dict::Pool> for several nodes.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
