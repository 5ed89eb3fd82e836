package CMRXDev::Corpus;

# The corpus of real cache values (bench/data/values), read for the tests
# and the benchmark alike. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use File::Basename ();
use File::Spec ();

use CMRXDev::GetResponse qw(stored_items);
use Cache::Memcached::RustXS::Dict qw(held_out_split);
use Cache::Memcached::RustXS::Dict::Measure ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(corpus_values corpus_halves);

# The corpus's folder, from this file's place in the distribution
# (dev/lib/CMRXDev): the same for the tests and the benchmark.
our $DIR = File::Spec->rel2abs(File::Basename::dirname(__FILE__) . '/../../../bench/data/values');

# Family name => [[key, value], ...] in file order, for each FAMILY.values
# file in $dir: a memcached get response (VALUE <key> 0 <bytes>, the bytes,
# CRLF; END), its items read as stored by the distribution's parser
# (CMRXDev::GetResponse).
sub corpus_values {
    my ($dir) = @_;
    my %family;
    opendir my $dh, $dir or die "$dir: $!\n";
    for my $name (sort grep { /\.values\z/ } readdir $dh) {
        my $path = "$dir/$name";
        open my $fh, '<:raw', $path or die "$path: $!\n";
        my $response = do { local $/; <$fh> };
        my $values = eval { stored_items($response) } or die "$path: $@";
        my @flagged = grep { $_->[1] != 0 } @$values;
        die "$path: the value of $flagged[0][0] has flags $flagged[0][1], not 0\n" if @flagged;
        (my $family_name = $name) =~ s/\.values\z//;
        splice @$_, 1, 1 for @$values;    # [key, flags, value] -> [key, value]
        $family{$family_name} = $values;
    }
    return \%family;
}

# (\%train, \%held): family => [[key, value], ...] of each family asked for
# (every family without any) of $DIR, split as cmrx-dict report splits a
# prefix's values: the training half and the held-out half.
sub corpus_halves {
    my (@families) = @_;
    my $corpus = corpus_values($DIR);
    @families = sort keys %$corpus unless @families;
    my (%train, %held);
    for my $f (@families) {
        my $values = $corpus->{$f} or die "$DIR has no family $f\n";
        ($train{$f}, $held{$f}) = held_out_split($values, $Cache::Memcached::RustXS::Dict::REPORT_HOLD_OUT);
    }
    return (\%train, \%held);
}

1;

__END__

=head1 NAME

CMRXDev::Corpus - the corpus of real cache values, for the tests and the benchmark

=head1 SYNOPSIS

    use lib 'dev/lib';
    use CMRXDev::Corpus qw(corpus_values);

    my $family = corpus_values('bench/data/values');
    for my $name (sort keys %$family) {          # api, compat, doc, ...
        for my $item (@{ $family->{$name} }) {
            my ($key, $value) = @$item;
            ...
        }
    }

=head1 DESCRIPTION

F<bench/data/values/> holds 583 real cache-sized values (JSON documents and
HTML fragments) in seven families, one file per family, each a memcached
C<get> response: C<VALUE E<lt>keyE<gt> 0 E<lt>bytesE<gt>>, the bytes, CRLF,
and C<END> at the end (F<bench/data/README.md> says where they come from).
The zstd tests train and measure on them, as the benchmark does.

=over 4

=item C<corpus_values($dir)>

A hash reference: family name (the file name without C<.values>) =>
C<[[key, value], ...]> in file order. Each file is read by the
distribution's own parser (L<CMRXDev::GetResponse>'s C<stored_items>: the
values as the file holds them),
so the distribution must be built and in C<@INC> (C<prove -b>, C<perl
-Mblib>). Dies naming the file on anything that parser refuses (a line
that is not a C<VALUE> line, a value cut short, a missing C<END>, ...) and
on flags other than 0.

=item C<corpus_halves(@families)>

C<(\%train, \%held)>: family name => C<[[key, value], ...]> of each
family asked for (all of them when none is), split as C<cmrx-dict report>
splits a prefix's values
(L<Cache::Memcached::RustXS::Dict/held_out_split(\@items, $every)>, every
2nd value held out): the half a dictionary is trained on and the half
it is judged on, or the benchmark fills memcached with. Reads
C<$CMRXDev::Corpus::DIR> (F<bench/data/values> of this distribution; a
test may C<local>ise it); dies on a family not there.

=back

=cut
