#!/usr/bin/perl
# Every installed document (each module, the guides, cmrx-dict's manual
# and script) has the sections a CPAN user looks for: NAME, SYNOPSIS,
# DESCRIPTION, SEE ALSO, AUTHOR and a LICENSE (its own =head1, or
# COPYRIGHT AND LICENSE), as =head1 headings. The check is first shown a
# document that lacks two, so a check that finds nothing fails here.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Peers qw(slurp);
use CMRXTest::Pod qw(pod_documents pod_outline);

my @REQUIRED = ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'SEE ALSO', 'AUTHOR', 'LICENSE');

# The required sections a POD text lacks.
sub missing_sections {
    my ($pod) = @_;
    my @head1 = map { $_->[1] } grep { $_->[0] == 1 } @{ pod_outline($pod)->{headings} };
    return grep {
        my $want = $_;
        $want eq 'LICENSE'
            ? !grep { /\A(?:COPYRIGHT AND )?LICEN[CS]E\z/ } @head1
            : !grep { $_ eq $want } @head1;
    } @REQUIRED;
}

is_deeply [missing_sections(<<'POD')], ['SEE ALSO', 'LICENSE'], 'a planted document lacking two: both found';
=head1 NAME

Planted - a document

=head1 SYNOPSIS

    planted();

=head1 DESCRIPTION

It plants.

=head1 AUTHOR

Someone.

=cut
POD

my $documents = pod_documents();
cmp_ok scalar(keys %$documents), '>=', 20, scalar(keys %$documents) . ' installed documents';
for my $name (sort keys %$documents) {
    my @missing = missing_sections(slurp($documents->{$name}));
    is "@missing", '', "$documents->{$name}: " . join(', ', @REQUIRED);
}

done_testing;
